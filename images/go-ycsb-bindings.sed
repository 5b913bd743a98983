# go-ycsb's cmd/go-ycsb/main.go imports a binding for every database it knows; zns-mysql drives MySQL only.
# This keeps the mysql and basic bindings and drops the import lines of the others, so that a cold build
# compiles what the Benchmark runs instead of twenty database clients (hack/images/go-ycsb.sh and
# images/go-build.Dockerfile apply it to their copy of the module, then check that both bindings are left).
/^[[:space:]]*_ "github\.com\/pingcap\/go-ycsb\/db\/\(mysql\|basic\)"$/b
/^[[:space:]]*_ "github\.com\/pingcap\/go-ycsb\/db\//d

// Package envtestreap keeps envtest's kube-apiserver and etcd from outliving a test binary.
//
// A TestMain stops envtest with a deferred env.Stop(), but a panicking test or a `go test -timeout`
// ends the process without running TestMain's defers, and the two servers then run on forever
// (envtest even puts them in process groups of their own, so Ctrl-C misses them too). Call
// Guard right after env.Start() succeeds: it starts a detached reaper that stops them once the
// test binary is gone. On a normal exit env.Stop() has already stopped them and the reaper just
// leaves. Guard does nothing outside Linux.
package envtestreap

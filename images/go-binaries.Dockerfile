# images/go-binaries.Dockerfile: the project's Go binaries (znsdb, znsbench, manager) and go-ycsb (built from its
# module at versions.mk's YCSB_VERSION by hack/images/go-ycsb.sh) as a scratch image that
# the other Dockerfiles copy from (their build argument GO_BINARIES names it: zns-mysql/go-binaries:dev).
#
# This is the default way to make it (hack/images/go-binaries.sh): the host's Go builds static binaries
# (CGO_ENABLED=0) into a build context that holds only them. No Go image is pulled, so it works without a
# registry; it needs the Go of go.mod on the host, which building this project needs anyway.
# The alternative, images/go-build.Dockerfile, compiles inside a Go image instead (GO_BUILD=docker).
FROM scratch
COPY znsdb znsbench manager go-ycsb /

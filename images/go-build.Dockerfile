# images/go-build.Dockerfile: the same scratch image of the Go binaries as images/go-binaries.Dockerfile,
# compiled inside a Go image instead of on the host: `GO_BUILD=docker hack/images/go-binaries.sh`.
# The build context is the repository (the script sends only go.mod, go.sum and operator/). Needs a Go image
# of the go.mod version (GO_IMAGE: pullable on a machine with a registry, or a local one) and the Go module
# proxy from the build container.
ARG GO_IMAGE=golang:1.26-bookworm
FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY operator/ operator/
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/ \
      ./operator/cmd/znsdb ./operator/cmd/znsbench ./operator/cmd/manager

# go-ycsb from its module (versions.mk's YCSB_VERSION, which hack/images/go-binaries.sh passes; the default is the
# same, test/images checks it): built as a main module from the module's files, since its go.mod's replace directive
# makes `go install MOD@VERSION` refuse it (hack/images/go-ycsb.sh does the same on the host).
# Only the mysql and basic bindings are built in (images/go-ycsb-bindings.sed).
ARG YCSB_VERSION=v1.0.3
COPY images/go-ycsb-bindings.sed /ycsb-bindings.sed
RUN dir=$(go mod download -json "github.com/pingcap/go-ycsb@${YCSB_VERSION}" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p') \
 && cp -r "$dir" /ycsb-src && chmod -R u+w /ycsb-src && cd /ycsb-src \
 && sed -i -f /ycsb-bindings.sed cmd/go-ycsb/main.go \
 && test "$(grep -cE '^[[:space:]]*_ "github\.com/pingcap/go-ycsb/db/' cmd/go-ycsb/main.go)" = 2 \
 && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/go-ycsb ./cmd/go-ycsb

FROM scratch
COPY --from=build /out/ /

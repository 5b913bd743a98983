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

FROM scratch
COPY --from=build /out/ /

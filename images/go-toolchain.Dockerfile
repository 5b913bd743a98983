# images/go-toolchain.Dockerfile: a Go image made from the base image and the host's Go toolchain, for
# `GO_BUILD=docker GO_IMAGE=host hack/images/go-binaries.sh` where no Go image can be pulled. The build
# context is a directory holding the host's GOROOT as go/ (the script prepares it).
ARG BASE_IMAGE=zns-mysql/debian:bookworm
FROM ${BASE_IMAGE}
COPY go/ /usr/local/go/
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates git >/dev/null \
 && rm -rf /var/lib/apt/lists/* \
 && /usr/local/go/bin/go version
ENV PATH=/usr/local/go/bin:$PATH GOTOOLCHAIN=local

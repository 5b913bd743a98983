# images/percona-zenfs-source.Dockerfile: the from-source alternative of Dockerfile.percona-zenfs. Percona
# Server compiled from its git tag with MyRocks and ZenFS, installed under /usr/local/mysql on the same
# runtime stage, so the image keeps the same contract (entrypoint, znsdb, uid 999, /usr/bin/zenfs).
#
# For a Percona version or patch that has no package with ZenFS. The flags are those of Percona's own ZenFS
# packages: -DWITH_ROCKSDB=ON -DROCKSDB_PLUGINS=zenfs -DWITH_ZENFS_UTILITY=ON -DWITH_ZBD=bundled.
# Network: github.com (percona/percona-server at the tag, and its submodules: RocksDB, ZenFS, libzbd, ...),
# the Boost archive cmake downloads (-DDOWNLOAD_BOOST=1; Boost 1.77 for 8.0), the Debian mirror.
# Hours on a few cores (BUILD_JOBS), ~20 GB of disk, a few GB of memory per compile job.
#
#   hack/images/build.sh percona-source
# which is:
#   docker build -f Dockerfile.percona-zenfs --target runtime -t zns-mysql/percona-zenfs-runtime:latest .
#   docker build -f images/percona-zenfs-source.Dockerfile -t zns-mysql/percona-zenfs:latest .
# It is a separate file, not a stage of Dockerfile.percona-zenfs, because the classic builder builds every
# stage before its target: the package build and this one must not depend on each other's network.
# Only images/ is read from the build context.

ARG BASE_IMAGE=zns-mysql/debian:bookworm
ARG RUNTIME_IMAGE=zns-mysql/percona-zenfs-runtime:latest

# ---- source-build: Percona Server + ZenFS compiled from the git tag (network: github.com, Boost) -------------
FROM ${BASE_IMAGE} AS source-build
ARG PERCONA_VERSION=8.0.44-35
ARG PERCONA_GIT=https://github.com/percona/percona-server.git
ARG BUILD_JOBS=2
ENV DEBIAN_FRONTEND=noninteractive
COPY images/apt-install.sh /usr/local/lib/zns-mysql/apt-install.sh
RUN /usr/local/lib/zns-mysql/apt-install.sh build-essential cmake bison pkg-config git ca-certificates \
      autoconf autoconf-archive automake libtool libssl-dev libncurses-dev libaio-dev libnuma-dev \
      libgflags-dev zlib1g-dev libldap-dev libsasl2-dev libcurl4-openssl-dev libudev-dev libtirpc-dev \
      rpcsvc-proto libmecab-dev
RUN git clone --depth 1 --branch "Percona-Server-${PERCONA_VERSION}" --recurse-submodules --shallow-submodules \
      "${PERCONA_GIT}" /src/percona-server \
 && cd /src/percona-server/storage/rocksdb/rocksdb_plugins/zenfs \
 && sed -i "s/^VERSION=.*/VERSION=percona-${PERCONA_VERSION}/" generate-version.sh
RUN mkdir /src/build && cd /src/build \
 && cmake /src/percona-server -DBUILD_CONFIG=mysql_release -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_INSTALL_PREFIX=/usr/local/mysql -DSYSCONFDIR=/etc/mysql \
      -DMYSQL_UNIX_ADDR=/var/run/mysqld/mysqld.sock -DMYSQL_DATADIR=/var/lib/mysql \
      -DINSTALL_SECURE_FILE_PRIVDIR=/var/lib/mysql-files \
      -DDOWNLOAD_BOOST=1 -DWITH_BOOST=/src/boost \
      -DWITH_ROCKSDB=ON -DROCKSDB_PLUGINS=zenfs -DWITH_ZENFS_UTILITY=ON -DWITH_ZBD=bundled \
      -DROCKSDB_DISABLE_AVX2=1 -DROCKSDB_DISABLE_MARCH_NATIVE=1 \
      -DWITH_SYSTEM_LIBS=ON -DWITH_PROTOBUF=bundled -DWITH_RAPIDJSON=bundled -DWITH_ICU=bundled \
      -DWITH_ZSTD=bundled -DWITH_LZ4=bundled -DWITH_ZLIB=bundled -DWITH_EDITLINE=bundled \
      -DWITH_LIBEVENT=bundled -DWITH_FIDO=bundled -DWITH_NUMA=ON \
      -DWITH_AUTHENTICATION_KERBEROS=OFF -DWITH_KERBEROS=none -DWITH_PAM=OFF \
      -DWITH_UNIT_TESTS=OFF -DWITH_ROUTER=OFF -DINSTALL_MYSQLTESTDIR= \
 && make -j"${BUILD_JOBS}" \
 && make install DESTDIR=/out \
 && { strip --strip-debug /out/usr/local/mysql/bin/* /out/usr/local/mysql/lib/plugin/*.so 2>/dev/null || true; }

# ---- the runtime stage of Dockerfile.percona-zenfs with the compiled server ---------------------------------
FROM ${RUNTIME_IMAGE} AS percona-zenfs-source
ARG MYSQL_UID=999
ARG MYSQL_GID=999
COPY --from=source-build /out/usr/local/mysql /usr/local/mysql
RUN ln -s /usr/local/mysql/bin/zenfs /usr/bin/zenfs \
 && /usr/local/lib/zns-mysql/verify-zenfs.sh /usr/local/mysql/lib/plugin/ha_rocksdb.so /usr/bin/zenfs \
      /usr/local/mysql/bin/mysqld
ENV PATH=/usr/local/mysql/bin:$PATH
USER ${MYSQL_UID}:${MYSQL_GID}
WORKDIR /var/lib/mysql

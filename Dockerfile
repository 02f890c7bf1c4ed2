# syntax=docker/dockerfile:1
# The Switchboard image: one static binary on an empty base, run as a
# non-root user, with its data in a volume. No shell and no package manager
# in the image: the binary checks its own health (switchboard healthcheck).
#
#   docker build -t switchboard .
#   docker run -p 8080:8080 -v switchboard-data:/var/lib/switchboard switchboard
#
# Release images are built by GoReleaser from deploy/docker/Dockerfile.release
# (the same final stage over a binary built outside the image).

ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
ARG DATE=""
# Static (no cgo: the SQLite driver is pure Go), the time zone database built
# in (schedules keep wall-clock time in any zone with no /usr/share/zoneinfo),
# symbols stripped.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -tags timetzdata \
      -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT} -X main.date=${DATE}" \
      -o /out/switchboard ./cmd/switchboard \
 && mkdir -p /out/data

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/switchboard /usr/local/bin/switchboard
# The working directory holds the default SQLite file (./data/switchboard.db)
# and belongs to the user the service runs as.
COPY --from=build --chown=65532:65532 /out/data /var/lib/switchboard/data
WORKDIR /var/lib/switchboard
ENV HOME=/var/lib/switchboard \
    SWITCHBOARD_ADDR=:8080 \
    SWITCHBOARD_LOG_FORMAT=json
USER 65532:65532
VOLUME ["/var/lib/switchboard"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/switchboard", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/switchboard"]
CMD ["serve"]

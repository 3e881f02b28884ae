# syntax=docker/dockerfile:1
# Pitboss API image: static Go binary on a distroless base.
#   docker build -t pitboss .        (docker compose up --build does this)

# Keep in step with the go directive in go.mod.
ARG GO_VERSION=1.26.8

# uPlot for the console's charts, at the version console/web's lock file pins
# (scripts/ensure-console-assets.sh does the same outside Docker).
FROM node:20-bookworm-slim AS console-assets
WORKDIR /web
COPY console/web/package.json console/web/package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

FROM golang:${GO_VERSION} AS build
WORKDIR /src
ENV CGO_ENABLED=0
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
COPY --from=console-assets /web/node_modules/uplot/dist/uPlot.iife.min.js /web/node_modules/uplot/dist/uPlot.min.css console/assets/vendor/
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath -ldflags="-s -w" -o /out/pitboss ./cmd/pitboss
# Writable state dir for the non-root user (PITBOSS_DATA_DIR, e.g. `pitboss sandbox` key files).
RUN mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
WORKDIR /app
COPY --from=build /out/pitboss /app/pitboss
COPY --from=build --chown=nonroot:nonroot /out/data /app/data
# Migrations are embedded in the binary (migrations/embed.go).
ENV PITBOSS_HTTP_ADDR=:8080 \
    PITBOSS_DATA_DIR=/app/data
EXPOSE 8080
USER nonroot:nonroot
ENTRYPOINT ["/app/pitboss"]
CMD ["serve"]

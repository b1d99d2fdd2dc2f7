# Build stage: Swift 6.3 on Debian bookworm (libwebsockets 4.1.6, SQLite 3.40, OpenSSL 3.0, as the project is tested with;
# hiredis 1.5 is built from Sources/CHiredis).
FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libwebsockets-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product livecontrols --static-swift-stdlib

# Runtime stage: the binary, the web client and the C libraries it links (libwebsockets, SQLite, OpenSSL);
# curl for the compose healthchecks (GET /readyz); its libcurl also carries webhook deliveries and the CLI's server API commands.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libwebsockets17 libsqlite3-0 libssl3 libcurl4 curl ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/.build/release/livecontrols /usr/local/bin/livecontrols
COPY web ./web
EXPOSE 8080
USER nobody
ENTRYPOINT ["livecontrols"]
CMD ["--host", "0.0.0.0", "--port", "8080", "--web-root", "/app/web"]

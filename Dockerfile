# syntax=docker/dockerfile:1
# Reflex as a container: a build stage compiles, the runtime stage holds the compiled CLI, the
# bundled rules and production dependencies only, and runs as an unprivileged user.
#
#   docker build -t reflex-lxd .
#   docker run --rm \
#     -v /var/lib/lxd:/var/lib/lxd:ro --group-add "$(stat -c %g /var/lib/lxd/unix.socket)" \
#     -e REFLEX_TARGET=unix:///var/lib/lxd/unix.socket -e REDIS_URL=redis://redis-host:6379 \
#     reflex-lxd doctor
#
# The socket: mount its DIRECTORY, not the socket file. The daemon makes a new socket file when it
# restarts, and a file bind mount would keep pointing at the old, dead one. Where it lives:
#   Debian/Ubuntu LXD package   /var/lib/lxd/unix.socket
#   snap LXD                    /var/snap/lxd/common/lxd/unix.socket
#   Incus                       /var/lib/incus/unix.socket
# The socket is root:<group> 0660 (lxd, or incus-admin); the user here reaches it through that
# group, added by its NUMERIC gid (the group name means nothing inside the image):
#   --group-add "$(stat -c %g SOCKET)"   (compose: group_add; see docker-compose.yml)
# What the image installs is scripts/image-install.sh (test/packaging/ runs the same script).

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.npm bash scripts/image-install.sh /src /app

FROM node:24-bookworm-slim
# REFLEX_HTTP_HOST: inside a container the port is reachable from outside only when published
# (docker run -p / compose ports), so /metrics, /healthz and /readyz listen on every address here.
# They answer a Host header that is an IP address or localhost; a name a scraper uses (the compose
# service name, a DNS name) goes in REFLEX_HTTP_ALLOWED_HOSTS (comma-separated; DNS rebinding guard).
# REFLEX_HISTORY_STORE=none: the files history store (the default elsewhere) needs one persistent
# folder shared by every replica, which a container's own layer is not. For history, mount a volume
# and set REFLEX_HISTORY_STORE=files REFLEX_HISTORY_DIR=<its path>, or use postgres
# (docs/operations.md, Audit history).
ENV NODE_ENV=production REFLEX_RULES=/app/rules REFLEX_HTTP_HOST=0.0.0.0 REFLEX_HTTP_PORT=9464 REFLEX_HISTORY_STORE=none
RUN groupadd --system --gid 10001 reflex \
 && useradd --system --uid 10001 --gid reflex --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin reflex
WORKDIR /app
# Owned by root and not writable by the worker: it reads its code and rules, it never changes them.
COPY --from=build /app /app
USER reflex
EXPOSE 9464
# No curl in the image: Node's own fetch asks /readyz (ready = Redis reachable, target subscribed).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.REFLEX_HTTP_PORT||9464)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/reflex.js"]
CMD ["run"]

# Multi-stage: install production dependencies once, run as a non-root user.
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY rules ./rules
# The LXD socket is root-owned; give this user access by group (e.g. --group-add lxd) rather than running as root.
USER node
ENTRYPOINT ["node", "bin/reflex.js"]

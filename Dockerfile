# The Keel worker image (used by docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save typescript@5.9.3 @types/node@20 @types/jest@29
COPY . .
RUN npx tsc -p tsconfig.json
USER node
CMD ["node", "dist/workers/main.js"]

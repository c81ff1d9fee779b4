import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console is served by the API under /console/ (apps/api/src/console/assets.ts). `npm run console:dev` runs
// this dev server with hot reload and forwards /console/api to the API of `npm start` (SENDLINE_API_PORT, 3000).
const apiPort = process.env.SENDLINE_API_PORT ?? '3000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
  server: {
    host: '127.0.0.1',
    port: Number(process.env.SENDLINE_CONSOLE_DEV_PORT ?? 5173),
    strictPort: true,
    proxy: { '/console/api': { target: `http://127.0.0.1:${apiPort}`, changeOrigin: false } },
  },
});

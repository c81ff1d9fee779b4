import { defineConfig } from 'tsup';

// dist/index.js (ESM), dist/index.cjs (CommonJS), dist/index.d.ts and dist/index.d.cts.
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  tsconfig: 'tsconfig.build.json',
  platform: 'neutral',
  target: 'es2022',
  sourcemap: true,
  clean: true,
  treeshake: true,
});

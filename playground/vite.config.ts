// Builds the playground page into playground/dist/ (`npm run playground`): one HTML file, the
// page's script and the Web Worker that runs the library. Relative URLs, so the directory can be
// served from anywhere (netfilter-sim playground, a static host, a file share).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

/** Gzipped bytes the built page may weigh in all (HTML, CSS, scripts, worker); the build fails past it. */
export const BUDGET_GZIP_BYTES = 400 * 1024;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}

/** Weighs the written page, gzipped, writes the figures to dist/sizes.json, and fails the build past the budget. */
function budget(): Plugin {
  return {
    name: 'netfilter-sim-budget',
    apply: 'build',
    writeBundle(options) {
      const dir = options.dir!;
      const sizes: Record<string, { bytes: number; gzip: number }> = {};
      let total = 0;
      for (const f of files(dir)) {
        if (f.endsWith('sizes.json')) continue;
        const data = readFileSync(f);
        const gzip = gzipSync(data, { level: 9 }).length;
        sizes[relative(dir, f)] = { bytes: data.length, gzip };
        total += gzip;
      }
      writeFileSync(join(dir, 'sizes.json'), JSON.stringify({ budgetGzip: BUDGET_GZIP_BYTES, totalGzip: total, files: sizes }, null, 2) + '\n');
      const line = `playground: ${Object.keys(sizes).length} files, ${(total / 1024).toFixed(1)} KiB gzipped (budget ${(BUDGET_GZIP_BYTES / 1024).toFixed(0)} KiB)`;
      if (total > BUDGET_GZIP_BYTES) throw new Error(`${line}: over the budget`);
      console.log(line);
    },
  };
}

export default defineConfig({
  plugins: [budget()],
  root: import.meta.dirname,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2048,
    rolldownOptions: { checks: { pluginTimings: false } },
  },
  worker: { format: 'es' },
});

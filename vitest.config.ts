import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    // Kernel-differential suites create network namespaces; keep them from stepping on each other.
    fileParallelism: true,
  },
});

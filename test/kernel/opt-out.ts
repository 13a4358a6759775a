/**
 * A run that leaves the kernel suites to another pass says so with `NETFILTER_SIM_KERNEL=off`
 * (the clean-clone pass of `.ci/run`, whose first pass already ran them against the kernel).
 * The kernel suites are then skipped with a visible warning even under `CI=true`; without the
 * variable, a missing kernel fails a `CI=true` run as before.
 */

/** Why the kernel suites are off, or null when they run. */
export function kernelOptOut(): string | null {
  return process.env['NETFILTER_SIM_KERNEL'] === 'off' ? 'NETFILTER_SIM_KERNEL=off (this pass leaves the kernel suites to another)' : null;
}

/** Whether a missing kernel must fail the run: under CI=true, unless the kernel suites are declared off. */
export function kernelRequired(): boolean {
  return process.env['CI'] === 'true' && kernelOptOut() === null;
}

/**
 * `-m rateest` rules with what iptables-save 1.8.9 prints for them after the kernel loaded them
 * (null: refused, by iptables or by the kernel). Each is loaded after the two estimators of
 * {@link RATEEST_PREAMBLE}, in mangle OUTPUT; test/extensions/rateest.test.ts checks ours,
 * test/kernel/extensions.differential.test.ts the kernel's.
 */
export const RATEEST_PREAMBLE: readonly string[] = [
  '-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s',
  '-A OUTPUT -j RATEEST --rateest-name 0123456789abcdef --rateest-interval 250ms --rateest-ewmalog 1s',
];

export const RATEEST_VECTORS: readonly (readonly [string, string | null])[] = [
  ['-m rateest --rateest foo --rateest-gt --rateest-bps 100kbit -j ACCEPT', '-m rateest --rateest foo --rateest-gt --rateest-bps 100000bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-pps 10 -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-pps 10 -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-bps1 1mbit --rateest-eq -j ACCEPT', '-m rateest --rateest foo --rateest-eq --rateest-bps 0bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-gt --rateest-bps -j ACCEPT', '-m rateest --rateest foo --rateest-gt --rateest-bps 0bit -j ACCEPT'],
  ['-m rateest --rateest1 foo --rateest2 foo --rateest-gt --rateest-bps -j ACCEPT', '-m rateest --rateest1 foo --rateest-gt --rateest-bps --rateest2 foo -j ACCEPT'],
  ['-m rateest --rateest-delta --rateest1 foo --rateest-bps1 1mbit --rateest-gt --rateest2 foo --rateest-bps2 2mbit -j ACCEPT', '-m rateest --rateest-delta --rateest1 foo --rateest-bps1 1000Kbit --rateest-gt --rateest-bps2 2000Kbit --rateest2 foo -j ACCEPT'],
  ['-m rateest --rateest foo ! --rateest-eq --rateest-pps 8 -j ACCEPT', '-m rateest --rateest foo ! --rateest-eq --rateest-pps 8 -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-bps 8 -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-bps 8bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-bps 1500000 -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-bps 1500Kbit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-bps 2gbit -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-bps 2000Mbit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-bps 123456 -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-bps 123456bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-gt --rateest-bps 100kbit --rateest-pps 5 -j ACCEPT', '-m rateest --rateest foo --rateest-gt --rateest-bps 100000bit --rateest-gt --rateest-pps 5 -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-gt --rateest-lt --rateest-bps 5 -j ACCEPT', '-m rateest --rateest foo --rateest-lt --rateest-bps 0bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-gt --rateest-pps 0x10 -j ACCEPT', '-m rateest --rateest foo --rateest-gt --rateest-pps 16 -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-gt --rateest-bps 1KiBps --rateest2 foo -j ACCEPT', '-m rateest --rateest1 foo --rateest-gt --rateest-bps --rateest2 foo -j ACCEPT'],
  ['-m rateest --rateest1 foo --rateest-pps1 3 --rateest-lt --rateest-pps2 4 --rateest2 foo --rateest-delta -j ACCEPT', '-m rateest --rateest-delta --rateest1 foo --rateest-pps1 3 --rateest-lt --rateest-pps2 4 --rateest2 foo -j ACCEPT'],
  ['-m rateest --rateest1 foo --rateest-pps1 3 ! --rateest-lt --rateest-bps2 4 --rateest2 foo -j ACCEPT', '-m rateest --rateest1 foo ! --rateest-lt --rateest-bps ! --rateest-lt --rateest-pps --rateest2 foo -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-delta --rateest-pps1 3 --rateest-lt --rateest-pps 4 -j ACCEPT', '-m rateest --rateest-delta --rateest foo --rateest-pps1 3 --rateest-lt --rateest-pps2 4 -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-delta --rateest-bps1 3mbit --rateest-lt --rateest-bps 4mbit -j ACCEPT', '-m rateest --rateest-delta --rateest foo --rateest-bps1 3000Kbit --rateest-lt --rateest-bps2 4000Kbit -j ACCEPT'],
  ['-m rateest --rateest 0123456789abcdef --rateest-lt --rateest-bps 4mbit -j ACCEPT', '-m rateest --rateest 0123456789abcde --rateest-lt --rateest-bps 4000Kbit -j ACCEPT'],
  ['-m rateest --rateest 0123456789abcdeXYZ --rateest-gt --rateest-bps 1234567890 -j ACCEPT', '-m rateest --rateest 0123456789abcde --rateest-gt --rateest-bps 1235Mbit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-eq --rateest-bps 12.5kbit -j ACCEPT', '-m rateest --rateest foo --rateest-eq --rateest-bps 12496bit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-eq --rateest-bps 1GBps -j ACCEPT', '-m rateest --rateest foo --rateest-eq --rateest-bps 8000Mbit -j ACCEPT'],
  ['-m rateest --rateest foo --rateest-lt --rateest-pps ! --rateest-eq -j ACCEPT', '-m rateest --rateest foo ! --rateest-eq --rateest-pps 0 -j ACCEPT'],
  ['-m rateest --rateest foo -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-gt -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-bps 5 -j ACCEPT', null],
  ['-m rateest --rateest-gt --rateest-bps 5 -j ACCEPT', null],
  ['-m rateest --rateest bar --rateest-gt --rateest-bps 5 -j ACCEPT', null],
  ['-m rateest --rateest1 foo --rateest2 bar --rateest-gt --rateest-bps -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-gt --rateest-bps 5xbit -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-gt --rateest-pps 5k -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest foo --rateest-lt --rateest-bps 4mbit -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-lt --rateest-bps 4mbit --rateest-bps 5 -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-lt --rateest-lt --rateest-bps 4mbit -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-delta --rateest-delta --rateest-lt --rateest-bps 4mbit -j ACCEPT', null],
  ['-m rateest ! --rateest foo --rateest-lt --rateest-bps 4mbit -j ACCEPT', null],
  ['-m rateest --rateest foo --rateest-lt ! --rateest-bps 4mbit -j ACCEPT', null],
  ['-m rateest -j ACCEPT', null],
];

/**
 * Whole mangle tables where the order and agreement of the estimator rules decide the load
 * (true: the kernel loads it), checked the same two ways.
 */
export const RATEEST_TABLES: readonly (readonly [readonly string[], boolean])[] = [
  [['-A OUTPUT -m rateest --rateest foo --rateest-gt --rateest-pps 1 -j ACCEPT', '-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s'], false],
  [['-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s', '-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 2s --rateest-ewmalog 8s'], false],
  [['-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s', '-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s'], true],
  [['-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s', '-A INPUT -j RATEEST --rateest-name foo --rateest-interval 0.9s --rateest-ewmalog 3.5s'], true],
  [['-A OUTPUT -j RATEEST --rateest-name foo --rateest-interval 1s --rateest-ewmalog 4s', '-A INPUT -j RATEEST --rateest-name foo --rateest-interval 1000ms --rateest-ewmalog 3s'], false],
  [['-A PREROUTING -j RATEEST --rateest-name a --rateest-interval 250ms --rateest-ewmalog 1s', '-A OUTPUT -m rateest --rateest1 a --rateest-lt --rateest-bps --rateest2 b -j ACCEPT', '-A OUTPUT -j RATEEST --rateest-name b --rateest-interval 250ms --rateest-ewmalog 1s'], false],
  [['-A PREROUTING -j RATEEST --rateest-name a --rateest-interval 250ms --rateest-ewmalog 1s', '-A OUTPUT -j RATEEST --rateest-name b --rateest-interval 250ms --rateest-ewmalog 1s', '-A PREROUTING -m rateest --rateest1 a --rateest-lt --rateest-bps --rateest2 b -j ACCEPT'], true],
];

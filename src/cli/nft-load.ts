/**
 * What `fmt` and `check` tell the nft reader about the host: its interfaces (`--iface NAME`,
 * in ifindex order after `lo`), and where `include "FILE"` finds files (`-I DIR`, searched in
 * order, as `nft -I DIR` searches its include path; an absolute path is read as it is).
 * @internal
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { NftParseOptions } from '../nftables/index.js';
import { UsageError, type CliIO } from './io.js';

/** The reader options for the `--iface` and `-I` values of a command line. */
export function nftLoadOptions(ifaces: readonly string[] | undefined, includeDirs: readonly string[] | undefined, io: CliIO): Omit<NftParseOptions, 'base'> {
  const interfaces = (ifaces ?? []).flatMap((v) => v.split(',')).filter((n) => n !== '');
  for (const n of interfaces) if (!/^[^\s/:]{1,15}$/.test(n)) throw new UsageError(`--iface ${n}: not an interface name (1-15 characters, no spaces, "/" or ":")`);
  const dirs = includeDirs ?? [];
  const read = (path: string): string | undefined => {
    try {
      return io.readFile(path);
    } catch {
      return undefined;
    }
  };
  const include = (path: string): string | undefined => {
    const candidates = isAbsolute(path) ? [path] : dirs.map((d) => join(d, path));
    for (const c of candidates) {
      if (basename(c).includes('*')) {
        // nft's include_glob: every matching file, in order; no match is not an error.
        const re = new RegExp(`^${basename(c).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
        let names: string[];
        try {
          names = readdirSync(dirname(c)).filter((n) => re.test(n)).sort();
        } catch {
          continue;
        }
        return names.map((n) => read(join(dirname(c), n)) ?? '').join('\n');
      }
      const text = read(c);
      if (text !== undefined) return text;
    }
    return undefined;
  };
  return { ...(interfaces.length > 0 ? { interfaces } : {}), ...(dirs.length > 0 ? { include } : {}) };
}

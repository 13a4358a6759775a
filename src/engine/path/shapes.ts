/**
 * The shapes of {@link Netns}'s option objects, checked at the entry points so that a wrong value
 * from plain JavaScript is a `BAD_ARGUMENT` naming its field (`options.interfaces.eth0[0]`,
 * `spec.from`), not a `TypeError` from deep inside or a value read the wrong way.
 *
 * @module
 */
import { expectShape } from '../../model/guard.js';
import type { Shape } from '../../model/guard.js';

const ROUTE_TYPES = ['unicast', 'local', 'broadcast', 'blackhole', 'unreachable', 'prohibit', 'throw'] as const;
const PORT = { kind: ['integer', 'undefined'] } as const;

const LISTENER: Shape = {
  kind: ['integer', 'string', 'object'],
  fields: {
    address: ['string', 'undefined'],
    port: 'integer',
    proto: { kind: ['string', 'undefined'], oneOf: ['tcp', 'udp'] },
    uid: ['integer', 'undefined'],
    gid: ['integer', 'undefined'],
    transparent: ['boolean', 'undefined'],
  },
};

const INTERFACE: Shape = {
  kind: 'object',
  fields: { name: 'string', addresses: { kind: 'array', items: 'string' }, routeLocalnet: ['boolean', 'undefined'] },
};

/** The shape of a {@link NetnsOptions} object (without its internal hooks). */
export const NETNS_OPTIONS_FIELDS: Readonly<Record<string, Shape>> = {
  rules: { kind: ['string', 'object', 'undefined'], fields: { tables: 'array' } },
  rules6: { kind: ['string', 'object', 'undefined'], fields: { tables: 'array' } },
  lenient: ['boolean', 'undefined'],
  nft: { kind: ['string', 'object', 'array', 'undefined'], fields: { tables: 'array' }, items: { kind: ['string', 'object'], fields: { tables: 'array' } } },
  listen: { kind: ['array', 'undefined'], items: LISTENER },
  interfaces: { kind: ['object', 'array', 'undefined'], values: { kind: 'array', items: 'string' }, items: INTERFACE },
  gateway: { kind: ['string', 'array', 'undefined'], items: 'string' },
  routes: {
    kind: ['array', 'undefined'],
    items: {
      kind: 'object',
      fields: { dst: 'string', via: ['string', 'undefined'], dev: ['string', 'undefined'], table: ['integer', 'undefined'], type: { kind: ['string', 'undefined'], oneOf: ROUTE_TYPES }, src: ['string', 'undefined'] },
    },
  },
  ipRules: {
    kind: ['array', 'undefined'],
    items: { kind: 'object', fields: { fwmark: 'integer', mask: ['integer', 'undefined'], table: 'integer', priority: ['integer', 'undefined'], family: { kind: ['integer', 'undefined'], oneOf: [4, 6] } } },
  },
  routeLocalnet: ['boolean', 'undefined'],
  ipForward: ['boolean', 'undefined'],
  peers: { kind: ['object', 'undefined'], values: { kind: 'array', items: 'integer' } },
  evaluator: { kind: ['string', 'undefined'], oneOf: ['lowered', 'reference'] },
  seed: ['integer', 'undefined'],
  clock: ['number', 'undefined'],
  registry: ['object', 'undefined'],
  check: ['object', 'undefined'],
  conntrack: ['boolean', 'undefined'],
  instrument: ['function', 'undefined'],
  instrumentNft: ['function', 'undefined'],
  observe: ['object', 'undefined'],
  conntrackMax: ['number', 'undefined'],
  ipsets: { kind: ['string', 'array', 'undefined'], items: 'object' },
  localPortRange: { kind: ['array', 'undefined'], items: 'number' },
};

/** Throws `BAD_ARGUMENT` naming the field unless `options` is a {@link NetnsOptions} object. */
export function expectNetnsOptions(options: unknown, what = 'options', extra: Readonly<Record<string, Shape>> = {}): void {
  expectShape(options, { kind: 'object', fields: { ...NETNS_OPTIONS_FIELDS, ...extra } }, what);
}

const LOCAL_SPEC: Readonly<Record<string, Shape>> = {
  uid: ['integer', 'null'],
  gid: ['integer', 'undefined'],
  groups: { kind: ['array', 'undefined'], items: 'integer' },
  dst: 'string',
  sport: PORT,
  proto: { kind: ['string', 'undefined'], oneOf: ['tcp', 'udp'] },
  src: ['string', 'undefined'],
  transparent: ['boolean', 'undefined'],
  mark: ['integer', 'undefined'],
};

const REMOTE_SPEC: Readonly<Record<string, Shape>> = {
  src: 'string',
  dst: 'string',
  sport: PORT,
  iface: ['string', 'undefined'],
  proto: { kind: ['string', 'undefined'], oneOf: ['tcp', 'udp'] },
};

/** Throws `BAD_ARGUMENT` naming the field unless `spec` is a {@link ConnectSpec}. */
export function expectConnectSpec(spec: unknown, what = 'spec'): void {
  expectShape(spec, { kind: 'object', fields: { from: { kind: 'string', oneOf: ['local', 'remote'] } } }, what);
  const from = (spec as { from: string }).from;
  expectShape(spec, { kind: 'object', fields: from === 'local' ? LOCAL_SPEC : REMOTE_SPEC }, what);
}

/** Throws `BAD_ARGUMENT` naming the field unless `options` is a {@link CallOptions} object. */
export function expectCallOptions(options: unknown, what = 'options'): void {
  expectShape(options, { kind: 'object', fields: { trace: ['boolean', 'undefined'], close: ['boolean', 'undefined'] } }, what);
}

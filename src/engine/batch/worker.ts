/**
 * The worker side of {@link NetnsPool}: one namespace, built from the pool's options, that runs
 * each share of probes it is sent, in order.
 *
 * @module
 * @internal
 */
import { parentPort, workerData } from 'node:worker_threads';
import { NetfilterSimError } from '../../model/errors.js';
import { StringTable, packResults } from './protocol.js';
import { TracePacker } from '../trace/pack.js';
import type { WorkerReply, WorkerRequest } from './protocol.js';
import { Netns } from '../path/netns.js';
import type { NetnsOptions } from '../path/netns.js';

const ns = new Netns((workerData as { options: NetnsOptions }).options);

parentPort!.on('message', (m: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    if ('flush' in m) {
      ns.flushConntrack();
      reply = { id: m.id, results: [] };
    } else {
      const table = new StringTable();
      if (m.trace) {
        // Each event is packed as it is recorded: no event object outlives its connection.
        const packer = new TracePacker(m.probes.length, table.intern);
        const results = m.probes.map((p) => {
          const { result, omitted } = ns.connectInto(p, m.close, packer);
          packer.endResult(omitted);
          return result;
        });
        reply = { id: m.id, packed: packResults(results, table, packer.finish()) };
      } else {
        const options = { trace: false, close: m.close };
        reply = { id: m.id, packed: packResults(m.probes.map((p) => ns.connect(p, options)), table) };
      }
    }
  } catch (e) {
    reply = {
      id: m.id,
      error: { message: e instanceof Error ? e.message : String(e), diagnostics: e instanceof NetfilterSimError ? e.diagnostics : null },
    };
  }
  if ('packed' in reply) {
    const p = reply.packed;
    const moved = [p.outcome.buffer, p.address.buffer, p.port.buffer, p.original.buffer, p.reason.buffer, p.error.buffer, p.errno.buffer] as ArrayBuffer[];
    if (p.traces !== null) moved.push(p.traces.values.buffer as ArrayBuffer, p.traces.end.buffer as ArrayBuffer, p.traces.omitted.buffer as ArrayBuffer);
    parentPort!.postMessage(reply, moved);
  } else parentPort!.postMessage(reply);
});

// The shared part of the Node harnesses of 'retrysim validate --exec':
// RETRYSIM_CLIENTS callers, each with its own SDK client (default retries)
// that names it in the RETRYSIM_CLIENT_HEADER header, all calling at once.
// A failed call is reported, not thrown: the server counts what happened.
// Before them, a few warm-up calls with the header value "warmup"
// (makeClient's second argument is true for them).
export function env() {
  const clients = Number.parseInt(process.env.RETRYSIM_CLIENTS ?? '', 10);
  const header = process.env.RETRYSIM_CLIENT_HEADER;
  if (!(clients >= 1) || !header) {
    throw new Error('RETRYSIM_CLIENTS and RETRYSIM_CLIENT_HEADER must be set (retrysim validate --exec sets them)');
  }
  return { clients, header, stream: process.env.RETRYSIM_STREAM === '1' };
}

export async function run(name, makeClient, call) {
  const { clients, header, stream } = env();
  // Warm-up: serve answers these itself (529, retry-after-ms 1), so the
  // SDK's retry path runs warm in the measured calls.
  for (let round = 0; round < 3; round++) {
    await Promise.allSettled(Array.from({ length: 5 }, () => call(makeClient({ [header]: 'warmup' }, true), stream)));
  }
  const results = await Promise.allSettled(
    Array.from({ length: clients }, (_, i) => call(makeClient({ [header]: `c${i}` }), stream)),
  );
  const failed = results.filter((r) => r.status === 'rejected');
  const kinds = {};
  for (const r of failed) {
    const k = `${r.reason?.constructor?.name ?? 'Error'} ${r.reason?.status ?? ''}`.trim();
    kinds[k] = (kinds[k] ?? 0) + 1;
  }
  console.log(`${name}: ${clients} callers, ${clients - failed.length} completed, ${failed.length} failed ${JSON.stringify(kinds)}`);
}

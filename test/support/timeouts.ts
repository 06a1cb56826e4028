import { cpus, loadavg } from 'os';

/**
 * A busy machine stretches everything, app boot first (PGlite start-up alone goes from seconds to a
 * minute at a load of 20 on two cores). So the default timeout of tests and hooks is the config's
 * `testTimeout` scaled by how loaded the machine is when the file starts (1× when idle, up to 8×),
 * never a fixed figure a slow boot can exceed. Tests assert behaviour, never speed.
 */
const base = Number(process.env.JEST_BASE_TIMEOUT_MS ?? 60_000);
const load = (loadavg()[0] ?? 0) / Math.max(1, cpus().length);
jest.setTimeout(Math.round(base * Math.min(8, Math.max(1, load))));

/**
 * FLOOR FOR READS (written for bench/compare.ts; not part of /work/shared/perf-floors, which has no
 * read endpoint): express + pg, the least a history page can cost. Same stack and pool as the http
 * floor's server.js (run with NODE_PATH pointing at its node_modules, so the same express 4 and pg).
 *
 *   GET /history?channel_id=N&limit=50   one keyset query on the floor's `messages` table
 *                                        (index messages_channel_created_id), rows as JSON
 *
 * Env: DATABASE_URL, PORT, POOL (default 16). Prints `listening <port> <pid>` when ready.
 */
import express from 'express';
import { Pool } from 'pg';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.POOL ?? 16) });
const app = express();

app.get('/history', (req, res) => {
  const channelId = Number(req.query.channel_id);
  const limit = Math.min(100, Number(req.query.limit ?? 50));
  pool
    .query(
      `SELECT id, channel_id, user_id, content, created_at FROM messages
        WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [channelId, limit],
    )
    .then((r) => res.json({ messages: r.rows }))
    .catch((e: unknown) => res.status(500).json({ error: e instanceof Error ? e.message : String(e) }));
});

const port = Number(process.env.PORT ?? 3101);
app.listen(port, '127.0.0.1', () => console.log('listening', port, process.pid));

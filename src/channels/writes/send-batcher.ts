import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SendOutcome, sendMessage, SendRequest, sendMessages } from './send-statement';

/**
 * Batch statements this instance runs at once. One: a batch never waits for a channel's lock (see
 * chat_send_messages), so one at a time is never held up by a busy channel, and the sends that arrive
 * while it runs make the next batch as large as the load.
 */
export const BATCH_STATEMENTS = 1;
/** At most this many sends in one statement. */
export const MAX_BATCH = 32;

interface Waiting {
  request: SendRequest;
  resolve: (out: SendOutcome) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit of the sends of one instance (issue 24). A send goes out at once, as a batch of one, when
 * no batch statement is running; the sends that arrive while one runs wait for it to finish and go together,
 * as one `chat_send_messages` statement and one commit. An idle instance adds no wait; a busy one pays
 * one round trip, one commit and one WAL flush for several sends. In each channel the sends keep the
 * order they arrived in.
 *
 * A send whose channel's lock another transaction holds is left out of the batch and sent on its own
 * (`chat_send_message`, which waits for the lock), beside the next batches. A statement error fails a
 * batch as a whole and commits nothing: its sends are then tried one by one, so only the one at fault
 * fails. A lost connection fails them all (nothing may be sent twice).
 */
@Injectable()
export class SendBatcher {
  private readonly waiting: Waiting[] = [];
  private running = 0;

  constructor(private readonly db: DataSource) {}

  send(request: SendRequest): Promise<SendOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < BATCH_STATEMENTS && this.waiting.length) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      this.running++;
      void this.run(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /**
   * The batch's statement (a batch of one too: it never waits for a lock); the sends it left out
   * because their channel was busy, or that must be tried alone after it failed, go on their own
   * without holding up the next batch.
   */
  private async run(batch: Waiting[]): Promise<void> {
    let left: Waiting[] = batch;
    try {
      const outs = await sendMessages(
        this.db.manager,
        batch.map((w) => w.request),
      );
      left = batch.filter((w, i) => {
        const out = outs[i];
        if (out) w.resolve(out);
        return !out;
      });
    } catch (e) {
      if (batch.length === 1 || !committedNothing(e)) {
        for (const w of batch) w.reject(e);
        return;
      }
    }
    this.alone(left);
  }

  /**
   * Sends on their own, each in its statement, which waits for its channel's lock: one channel's in
   * the order they came, the channels side by side.
   */
  private alone(sends: Waiting[]): void {
    const byChannel = new Map<string, Waiting[]>();
    for (const w of sends) {
      const line = byChannel.get(w.request.channelId);
      if (line) line.push(w);
      else byChannel.set(w.request.channelId, [w]);
    }
    for (const line of byChannel.values())
      void (async () => {
        for (const w of line) {
          try {
            w.resolve(await sendMessage(this.db.manager, w.request));
          } catch (e) {
            w.reject(e);
          }
        }
      })();
  }
}

/**
 * PostgreSQL answered the statement with an error of the statement itself (a SQLSTATE outside the
 * connection, resource and operator classes): it was rolled back, so its sends may be tried again.
 */
function committedNothing(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(08|53|57|58)/.test(code);
}

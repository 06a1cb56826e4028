import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Context } from '@opentelemetry/api';
import {
  ATTR,
  captureContext,
  inSpan,
  ROOT_CONTEXT,
  spanContextIn,
  traceparentOf,
  tracingOn,
  within,
} from '../../ops/tracing/tracing';
import { BatchOutcome, SendOutcome, sendMessage, SendRequest, sendMessages } from './send-statement';

/** At most this many sends in one statement. */
const MAX_BATCH = 32;

interface Waiting {
  request: SendRequest;
  resolve: (out: SendOutcome) => void;
  reject: (e: unknown) => void;
  /** The sender's trace context (tracing on), which the send's statement belongs to. */
  ctx: Context | null;
}

/**
 * Group commit of the sends of one instance (issue 24). A send goes out at once, as a batch of one, when
 * no batch statement is running; the sends that arrive while one runs wait for it to finish and go
 * together, as one `chat_send_messages` statement and one commit. An idle instance adds no wait; a busy
 * one pays one round trip, one commit and one WAL flush for several sends.
 *
 * A send whose channel's lock another transaction holds is left out of the batch and sent on its own
 * (`chat_send_message`, which waits for the lock), beside the next batches: a channel's sends that go
 * on their own form a line, and its later sends join that line until it is empty, so in each channel
 * the sends are stored in the order they arrived. A statement error fails a batch as a whole and commits
 * nothing: its sends then go on their own. A lost connection fails them all (nothing may be sent twice).
 * While a batch waits for a row lock (a workspace's settings being changed, a message being erased)
 * the instance's next sends wait with it.
 */
@Injectable()
export class SendBatcher {
  private readonly waiting: Waiting[] = [];
  /**
   * A batch statement is running. One at a time: a batch never waits for a channel's lock (see
   * chat_send_messages), so it is not held up by a busy channel, and the sends that arrive while it runs
   * make the next batch as large as the load.
   */
  private running = false;
  /** Channels whose sends are going on their own, one at a time, in arrival order. */
  private readonly lines = new Map<string, Waiting[]>();

  constructor(private readonly db: DataSource) {}

  send(request: SendRequest): Promise<SendOutcome> {
    return new Promise((resolve, reject) => {
      const w: Waiting = { request, resolve, reject, ctx: captureContext() };
      if (this.lines.has(request.channelId)) this.alone([w]);
      else {
        this.waiting.push(w);
        this.pump();
      }
    });
  }

  private pump(): void {
    if (this.running || !this.waiting.length) return;
    this.running = true;
    void this.run(this.waiting.splice(0, MAX_BATCH)).finally(() => {
      this.running = false;
      this.pump();
    });
  }

  /**
   * The batch's statement (a batch of one too: it never waits for a channel's lock); the sends it left
   * out because their channel was busy, or all of them after a statement error, go on their own.
   */
  private async run(batch: Waiting[]): Promise<void> {
    let left: Waiting[];
    try {
      const answers = await this.statement(batch);
      left = batch.filter((w, i) => {
        const answer = answers[i]!;
        if (answer === 'busy') return true;
        if (answer instanceof Error) w.reject(answer);
        else w.resolve(answer);
        return false;
      });
    } catch (e) {
      if (!committedNothing(e) || batch.length === 1) {
        for (const w of batch) w.reject(e);
        return;
      }
      left = batch;
    }
    this.alone(left);
  }

  /**
   * The batch's statement. Traced, a batch of one runs in its sender's span; a larger one in a span of
   * its own (a trace of its own) that links to each sender's, and each send's events keep its sender's
   * traceparent.
   */
  private statement(batch: Waiting[]): Promise<BatchOutcome[]> {
    const requests = batch.map((w) => w.request);
    if (!tracingOn()) return sendMessages(this.db.manager, requests);
    const senders = batch.map((w) => spanContextIn(w.ctx));
    const run = () => sendMessages(this.db.manager, requests, senders.map(traceparentOf));
    if (batch.length === 1) return within(batch[0]!.ctx, run);
    return inSpan(
      'chat.send batch',
      {
        parent: ROOT_CONTEXT,
        attributes: { [ATTR.batch]: batch.length },
        links: senders.flatMap((sc) => (sc ? [{ context: sc }] : [])),
      },
      run,
    );
  }

  /**
   * Sends on their own, each in its statement, which waits for its channel's lock: behind the channel's
   * line when it has one, which goes on until it is empty; the channels side by side.
   */
  private alone(sends: Waiting[]): void {
    for (const w of sends) {
      const channel = w.request.channelId;
      const line = this.lines.get(channel);
      if (line) {
        line.push(w);
        continue;
      }
      this.lines.set(channel, [w]);
      void this.drain(channel);
    }
    // sends waiting for the next batch came after these: those of a channel with a line join it
    const next = this.waiting.splice(0).filter((w) => {
      const line = this.lines.get(w.request.channelId);
      if (line) line.push(w);
      return !line;
    });
    this.waiting.push(...next);
  }

  private async drain(channel: string): Promise<void> {
    const line = this.lines.get(channel)!;
    while (line.length) {
      const w = line[0]!;
      try {
        w.resolve(await within(w.ctx, () => sendMessage(this.db.manager, w.request)));
      } catch (e) {
        w.reject(e);
      }
      line.shift();
    }
    this.lines.delete(channel);
  }
}

/**
 * PostgreSQL answered the statement with an error of the statement itself (a SQLSTATE outside the
 * connection, resource and operator classes, or a cancelled statement): it was rolled back, so its
 * sends may be tried again.
 */
function committedNothing(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return (
    typeof code === 'string' &&
    /^[0-9A-Z]{5}$/.test(code) &&
    (code === '57014' || !/^(08|53|57|58)/.test(code))
  );
}

import { randomUUID } from 'crypto';
import { readFileSync } from 'fs';
import { Agent } from 'https';
import { App, cert, deleteApp, initializeApp } from 'firebase-admin/app';
import { getMessaging, Messaging } from 'firebase-admin/messaging';
import { PushGateway, PushNotification, PushOutcome } from './push-gateway';

interface ServiceAccountFile {
  type?: unknown;
  project_id?: unknown;
  client_email?: unknown;
  private_key?: unknown;
}

/** Reads and checks a Firebase service-account JSON file; the message names what is wrong, never the key. */
export function readServiceAccount(file: string): {
  projectId: string;
  clientEmail: string;
  privateKey: string;
} {
  let parsed: ServiceAccountFile;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as ServiceAccountFile;
  } catch (e) {
    throw new Error(
      `SERVICE_PUSH_SERVICE_ACCOUNT_FILE ${file} cannot be read as JSON: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const { project_id: projectId, client_email: clientEmail, private_key: privateKey } = parsed;
  if (
    parsed.type !== 'service_account' ||
    typeof projectId !== 'string' ||
    typeof clientEmail !== 'string' ||
    typeof privateKey !== 'string'
  ) {
    throw new Error(
      `SERVICE_PUSH_SERVICE_ACCOUNT_FILE ${file} is not a service-account key (needs type "service_account", project_id, client_email, private_key)`,
    );
  }
  return { projectId, clientEmail, privateKey };
}

/**
 * Firebase Cloud Messaging through firebase-admin 13 (HTTP v1 API, OAuth2 with the service account).
 *
 * It uses firebase-admin's HTTP/1.1 transport for `sendEachForMulticast`: the HTTP/2 one opens one
 * session per call limited to 100 concurrent streams, and FCM answers batches of a few hundred tokens
 * with GOAWAY (firebase-admin-node #2943); its session errors also escaped callers' promises (#2789).
 * A keep-alive agent bounds the sockets instead.
 */
export class FcmPushGateway extends PushGateway {
  readonly enabled = true;
  private readonly app: App;
  private readonly messaging: Messaging;
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(file: string) {
    super();
    const account = readServiceAccount(file);
    // a name of its own: several service instances (tests) can live in one process
    this.app = initializeApp(
      { credential: cert(account, this.agent), projectId: account.projectId, httpAgent: this.agent },
      `chat-service-push-${randomUUID()}`,
    );
    this.messaging = getMessaging(this.app);
    this.messaging.enableLegacyHttpTransport();
  }

  async send(tokens: string[], notification: PushNotification): Promise<PushOutcome[]> {
    if (!tokens.length) return [];
    if (tokens.length > this.maxBatch) throw new Error(`at most ${this.maxBatch} tokens per multicast`);
    const res = await this.messaging.sendEachForMulticast({
      tokens,
      notification: { title: notification.title },
      data: notification.data,
    });
    return res.responses.map((r, i) => ({
      token: tokens[i]!,
      ok: r.success,
      errorCode: r.error?.code,
      errorMessage: r.error?.message,
    }));
  }

  async close(): Promise<void> {
    await deleteApp(this.app);
    this.agent.destroy();
  }
}

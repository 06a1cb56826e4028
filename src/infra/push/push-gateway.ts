/** What a push carries. Deliberately small: never message content. */
export interface PushNotification {
  title: string;
  data: Record<string, string>;
}

export interface PushOutcome {
  token: string;
  ok: boolean;
  /** The gateway's error code, e.g. `messaging/registration-token-not-registered`. */
  errorCode?: string;
  errorMessage?: string;
}

/** A multicast push service (FCM). `enabled` is false until it is configured. */
export abstract class PushGateway {
  abstract readonly enabled: boolean;

  /** Largest batch `send` accepts. */
  readonly maxBatch: number = 500;

  /** One multicast to up to `maxBatch` tokens; one outcome per token, in order. Throws when nothing could be sent. */
  abstract send(tokens: string[], notification: PushNotification): Promise<PushOutcome[]>;

  abstract close(): Promise<void>;
}

/** Push is off (SERVICE_PUSH_SERVICE_ACCOUNT_FILE unset). */
export class DisabledPushGateway extends PushGateway {
  readonly enabled = false;

  async send(): Promise<PushOutcome[]> {
    throw new Error('push is not configured');
  }

  async close(): Promise<void> {}
}

/** FCM's codes for a token that will never work again (the device is gone or the token is garbage). */
export function isDeadToken(o: PushOutcome): boolean {
  if (o.ok) return false;
  switch (o.errorCode ?? '') {
    case 'messaging/registration-token-not-registered':
    case 'messaging/invalid-registration-token':
      return true;
    case 'messaging/invalid-argument':
      // INVALID_ARGUMENT also covers a malformed message; only a complaint about the token condemns it
      return /registration token/i.test(o.errorMessage ?? '');
    default:
      return false;
  }
}

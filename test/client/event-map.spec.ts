/**
 * The client mirrors the service's realtime event map by hand (packages/client/src/events.ts): this
 * fails, at compile time (ts-jest type-checks it) and at run time, when the two drift apart.
 */
import { SERVER_EVENTS, type ServerToClientEvents } from '../../src/realtime/realtime-events';
import { SERVER_EVENT_NAMES, type ServerEventMap } from '../../packages/client/src/events';

type ServiceData<K extends keyof ServerToClientEvents> = Parameters<ServerToClientEvents[K]>[0]['data'];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Every level spelled out as a plain object type, so an intersection equals its flat form. */
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
/** Strict: optional fields, readonly and literal types must match too. */
type Exactly<A, B> =
  (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;

/** The event names whose payload types differ (never when in step). */
type Drifted = {
  [K in keyof ServerToClientEvents]: K extends keyof ServerEventMap
    ? Exactly<ServiceData<K>, ServerEventMap[K]> extends true
      ? never
      : K
    : K;
}[keyof ServerToClientEvents];

const payloadsInStep: [Drifted] extends [never] ? true : { drifted: Drifted } = true;
const namesInStep: Same<keyof ServerToClientEvents, keyof ServerEventMap> = true;

describe('the client’s realtime event map', () => {
  it('has the service’s event names and payload types', () => {
    expect([payloadsInStep, namesInStep]).toEqual([true, true]);
    expect([...SERVER_EVENT_NAMES].sort()).toEqual([...SERVER_EVENTS].sort());
  });
});

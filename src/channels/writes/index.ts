export * from './channel-write-session';
export * from './channel-writes';
export * from './send-batcher';
export * from './send-statement';
export * from './write-policy';

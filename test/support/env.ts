// Tests never inherit the developer's service configuration by accident.
for (const k of Object.keys(process.env)) {
  if (k.startsWith('SERVICE_') || k === 'PORT') delete process.env[k];
}
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? 'silent';

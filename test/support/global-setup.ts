import { ensureTemplate, runId } from './databases';

export default async function globalSetup(): Promise<void> {
  runId();
  await ensureTemplate();
}

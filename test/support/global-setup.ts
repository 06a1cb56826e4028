import { ensureTemplate } from './databases';

export default async function globalSetup(): Promise<void> {
  await ensureTemplate();
}

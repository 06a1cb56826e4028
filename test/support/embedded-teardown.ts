import { removeTemplate } from './embedded-template';

export default function globalTeardown(): void {
  removeTemplate();
}

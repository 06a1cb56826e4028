import { startTestApp, TestApp } from '../support/app';
import { newWorkspace } from '../support/fixtures';

describe('smoke', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('creates a workspace and a user', async () => {
    const ws = await newWorkspace(t);
    const ana = await ws.user('ana');
    const me = await ws.api.get('/v1/users/ana');
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(ana.id);
  });
});

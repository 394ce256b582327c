import { runAdapterOptionCases } from '@kyb-webhooks/testing/adapter-suite';
import { kybWebhooks } from './index.js';

runAdapterOptionCases('kybWebhooks (@kyb-webhooks/hono)', (receiver, options) => kybWebhooks(receiver, options), {
  invalid: [
    ['an option of another adapter', { path: '/webhooks/kyb' }, ['`path` is not an option; the options are onResult.']],
  ],
});

/**
 * CHANGE works on a finished grid (IMAGINE, BLEND, VARIATION, REROLL) of the caller's own
 * account. The task stream says whether it is finished, which upstream job it was and on which
 * channel; another account's task is refused exactly like a missing one. Reads only.
 */
import { readTask } from '../../engine/commands/task-commands.js';
import type { GatewayDeps } from '../../http/deps.js';
import { GatewayError } from '../../http/errors.js';
import { ART_FAMILY } from './view.js';

/** Actions whose result is a grid of four images that UPSCALE/VARIATION/REROLL work on. */
const GRID_ACTIONS: readonly string[] = ['IMAGINE', 'BLEND', 'VARIATION', 'REROLL'];

export interface ChangeParent {
  upstreamTaskId: string;
  channelId: string;
  prompt: string;
}

const refused = (reason: string): GatewayError => new GatewayError(400, 'invalid_request', `taskId: ${reason}`, 'taskId');

export async function changeParent(deps: GatewayDeps, taskId: string, accountId: string, action: string): Promise<ChangeParent> {
  const { state } = await readTask(deps.events, taskId);
  if (state.status === 'none' || state.family !== ART_FAMILY || state.accountId !== accountId) throw refused('task_no_found');
  if (state.status !== 'succeeded' && state.status !== 'expired') {
    throw refused(
      state.status === 'failed' ? 'the task failed; only a finished task can be changed' : 'the task is not finished yet; change it once its status is SUCCESS',
    );
  }
  if (!GRID_ACTIONS.includes(state.action))
    throw refused(`a ${state.action} result cannot be changed with ${action}; only IMAGINE, BLEND, VARIATION and REROLL grids can`);
  if (!state.upstreamTaskId || !state.channelId) throw refused('the task has no upstream job to change');
  const prompt = state.request.prompt;
  return { upstreamTaskId: state.upstreamTaskId, channelId: state.channelId, prompt: typeof prompt === 'string' ? prompt : '' };
}

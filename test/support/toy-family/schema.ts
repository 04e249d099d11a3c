/**
 * Step 2 of docs/adding-a-family.md, `schema.ts`: the toy route's declared contract in zod, the
 * only validator of its fields (kit/schema.ts building blocks), and its answers, whose types are
 * `z.infer` of them. Messages give the reason only: the error mapper (src/http/errors.ts) puts
 * the field's path in front (`n: must be an integer from 1 to 4`) and names it as `param`.
 * What depends on the model (how many sketches toy-sketch-hd draws) is the plan's (request.ts).
 */
import { z } from 'zod';
import { callbackUrl, int, jsonBody, oneOf, prompt, requiredOneOf } from '../../../src/families/kit/schema.js';
import { toyModels } from './catalog.js';

export const TOY_MAX_SKETCHES = 4;
export const TOY_STYLES = ['pencil', 'ink', 'crayon'] as const;
export const TOY_DEFAULTS = { n: 1, style: 'pencil' } as const;

export const ToySubmitBody = jsonBody({
  model: requiredOneOf(toyModels, `required, one of ${toyModels.join(', ')}`),
  prompt,
  n: int(1, TOY_MAX_SKETCHES).meta({ description: `sketches to draw, default ${TOY_DEFAULTS.n} (toy-sketch-hd: at most 2)` }),
  style: oneOf(TOY_STYLES).meta({ description: `default ${TOY_DEFAULTS.style}` }),
  callback_url: callbackUrl(),
});
export type ToySubmitBody = z.output<typeof ToySubmitBody>;

export const TOY_STATUSES = ['queued', 'drawing', 'done', 'failed'] as const;

/** The task as the submit answers it and the query route reads it. */
export const ToyTaskAnswer = z.object({
  id: z.string().meta({ description: 'the task id' }),
  object: z.literal('toy.sketch'),
  model: z.string(),
  status: z.enum(TOY_STATUSES),
  progress: z.number().int().min(0).max(100).meta({ description: 'percent' }),
  created_at: z.number().int().meta({ description: 'Unix seconds' }),
  sketches: z.array(z.object({ url: z.string().meta({ description: "the gateway's signed URL of a PNG" }) })),
  charged: z.number().int().meta({ description: 'quota units charged, once done' }),
  failure: z.string().optional().meta({ description: 'why the task failed' }),
});
export type ToyTaskBody = z.infer<typeof ToyTaskAnswer>;

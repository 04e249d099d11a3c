/**
 * The art routes' declared contract (spec 2.7, 3.5, 4.14): the four submit bodies, every field
 * in the words the rules used (request.ts builds the upstream body from them), and the answers.
 * CHANGE's body depends on its `action`: UPSCALE and VARIATION need an `index`, REROLL takes
 * none. What depends on the store (the task CHANGE works on) stays with the route.
 */
import { z } from 'zod';
import { isPlainObject } from '../kit/fields.js';
import { absent, boundedString, callbackUrl, IMAGE_DATA_URI_PATTERN, jsonBody, NON_BLANK, oneOf } from '../kit/schema.js';
import type { ArtSubmit } from './request.js';

export const CHANGE_ACTIONS = ['UPSCALE', 'VARIATION', 'REROLL'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];
export const DIMENSIONS = ['PORTRAIT', 'SQUARE', 'LANDSCAPE'] as const;

export const ART_PROMPT_MAX = 6000;
export const ART_STATE_MAX = 1024;
export const IMAGINE_MAX_IMAGES = 5;
export const BLEND_MIN_IMAGES = 2;
export const BLEND_MAX_IMAGES = 5;
export const GRID_SIZE = 4;
export const TASK_ID_MAX = 128;
/** A gateway task id as CHANGE takes it: letters, digits, `_` and `-`. */
export const TASK_ID_PATTERN = new RegExp(`^[\\w-]{1,${TASK_ID_MAX}}$`);

export const DATA_URI_HINT = 'a data:image/<format>;base64,<data> URI';

/** A string the field cannot do without: `required` when missing (or null), as the rules word it. */
const requiredString = (required: string, wrongType = 'must be a string') => z.string({ error: (issue) => (absent(issue.input) ? required : wrongType) });

/** A list of data URI images (readImages); with `required` the list must be given, and that is the word when it is not. */
function images(min: number, max: number, required?: string) {
  const message = `must be an array of ${min} to ${max} images, each ${DATA_URI_HINT}`;
  const list = z
    // Every item is checked below, in the rules' words: typed as the strings they then are.
    .array(
      z.custom<string>(() => true),
      { error: (issue) => (required !== undefined && absent(issue.input) ? required : message) },
    )
    .min(min, message)
    .max(max, message)
    .superRefine((items, ctx) => {
      const bad = items.findIndex((item) => typeof item !== 'string' || !IMAGE_DATA_URI_PATTERN.test(item));
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `item ${bad} must be ${DATA_URI_HINT}` });
    })
    .meta({ items: { type: 'string', pattern: IMAGE_DATA_URI_PATTERN.source }, description: `${min} to ${max} images, each ${DATA_URI_HINT}` });
  return required === undefined ? list.nullish() : list;
}

/** What every submit reads after its own fields. */
const common = {
  notifyHook: callbackUrl(),
  state: boundedString({ minLength: 0, maxLength: ART_STATE_MAX }).meta({ description: 'returned as given in the task record' }),
};

const ImagineBody = jsonBody({
  prompt: requiredString('required, what to imagine')
    .regex(NON_BLANK, 'must not be empty')
    .max(ART_PROMPT_MAX, `must be at most ${ART_PROMPT_MAX} characters`)
    .meta({ description: 'what to imagine' }),
  base64Array: images(1, IMAGINE_MAX_IMAGES),
  ...common,
});

const DescribeBody = jsonBody({
  base64: requiredString(`required, the image to describe as ${DATA_URI_HINT}`, `must be ${DATA_URI_HINT}`)
    .regex(IMAGE_DATA_URI_PATTERN, `must be ${DATA_URI_HINT}`)
    .meta({ description: `the image to describe, ${DATA_URI_HINT}` }),
  ...common,
});

const BlendBody = jsonBody({
  base64Array: images(BLEND_MIN_IMAGES, BLEND_MAX_IMAGES, `required, ${BLEND_MIN_IMAGES} to ${BLEND_MAX_IMAGES} images to blend`),
  dimensions: oneOf(DIMENSIONS).meta({ description: 'default SQUARE' }),
  ...common,
});

const taskIdSyntax = `must be a task id (letters, digits, _ and -, at most ${TASK_ID_MAX})`;

const taskId = requiredString('required, the id of the finished task to change', taskIdSyntax)
  .regex(TASK_ID_PATTERN, taskIdSyntax)
  .meta({ description: 'the finished IMAGINE, BLEND, VARIATION or REROLL task of this account to change' });

const INDEX_RULE = `must be an integer from 1 to ${GRID_SIZE}`;

/** UPSCALE and VARIATION work on one image of the grid: `index` is required. */
const changeOneImage = <A extends 'UPSCALE' | 'VARIATION'>(action: A) =>
  jsonBody({
    taskId,
    action: z.literal(action),
    index: z
      .number({ error: (issue) => (absent(issue.input) ? `required for ${action}: which image of the grid, 1 to ${GRID_SIZE}` : INDEX_RULE) })
      .int(INDEX_RULE)
      .min(1, INDEX_RULE)
      .max(GRID_SIZE, INDEX_RULE)
      .meta({ description: `which image of the grid, 1 to ${GRID_SIZE}` }),
    ...common,
  });

const isIndex = (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= GRID_SIZE;

/** REROLL redoes the whole grid: an `index` is refused, as not used once it is one, else as no index. */
const ChangeRerollBody = jsonBody({
  taskId,
  action: z.literal('REROLL'),
  index: z
    .null({ error: (issue) => (isIndex(issue.input) ? 'not used by REROLL (it redoes the whole grid)' : INDEX_RULE) })
    .optional()
    .meta({ description: 'not taken: REROLL redoes the whole grid' }),
  ...common,
});

/** Why a CHANGE body is refused before its action is known: it is no object, or its action is none of the three. */
function noAction(issue: z.core.$ZodRawIssue): string {
  if (issue.code === 'invalid_type') return 'must be a JSON object';
  const action = isPlainObject(issue.input) ? issue.input.action : undefined;
  return absent(action) ? `required, one of ${CHANGE_ACTIONS.join(', ')}` : `must be one of ${CHANGE_ACTIONS.join(', ')}`;
}

/** `taskId` comes first, as the rules read it: checked before `action` selects the member. */
function taskIdFirst(body: unknown, ctx: z.core.$RefinementCtx): unknown {
  const read = isPlainObject(body) ? taskId.safeParse(body.taskId) : undefined;
  if (read?.success === false) ctx.addIssue({ code: 'custom', path: ['taskId'], message: read.error.issues[0]?.message ?? taskIdSyntax });
  return body;
}

const ChangeBody = z.preprocess(
  taskIdFirst,
  z
    .discriminatedUnion('action', [changeOneImage('UPSCALE'), changeOneImage('VARIATION'), ChangeRerollBody], { error: noAction })
    .meta({ description: 'the action selects the body: UPSCALE and VARIATION name one image of the grid (index), REROLL none' }),
);

export const ART_BODIES = { imagine: ImagineBody, describe: DescribeBody, blend: BlendBody, change: ChangeBody } as const satisfies Record<
  ArtSubmit,
  z.ZodType
>;

/** The body of each submit as its schema parsed it. */
export type ArtBody<K extends ArtSubmit> = z.output<(typeof ART_BODIES)[K]>;

/** The task named by the path, as the submit answered it (`result`). */
export const ArtTaskParams = z.object({ id: z.string().meta({ description: 'the task id the submit answered as result' }) });

export const ArtSubmitAnswer = z.object({
  code: z.literal(1).meta({ description: '1: submitted' }),
  description: z.string(),
  result: z.string().meta({ description: 'the task id' }),
  properties: z.object({}),
});

/** The task record (src/families/art/view.ts). */
export const ArtTaskAnswer = z.object({
  id: z.string(),
  action: z.string().meta({ description: 'IMAGINE, DESCRIBE, BLEND, UPSCALE, VARIATION or REROLL' }),
  prompt: z.string().meta({ description: 'DESCRIBE: the prompts it found' }),
  description: z.string().meta({ description: 'the command, e.g. /imagine …' }),
  state: z.string(),
  status: z.enum(['IN_PROGRESS', 'SUCCESS', 'FAILURE']),
  progress: z.string(),
  failReason: z.string(),
  imageUrl: z.string().meta({ description: 'the main image (the grid, or the upscaled image); empty after the retention' }),
  cdnImage: z.string(),
  images: z.array(z.string()),
  components: z.array(z.string()).meta({ description: 'the CHANGE operations a finished grid accepts, e.g. UPSCALE:1' }),
  width: z.number(),
  height: z.number(),
  seed: z.number(),
  quota: z.string().meta({ description: 'held while running, then charged ("0" on FAILURE)' }),
  assetsExpireAt: z.number().meta({ description: 'Unix seconds; 0 until there are assets' }),
  assetRetentionNotice: z.string(),
  submitTime: z.number().meta({ description: 'Unix milliseconds' }),
  startTime: z.number().meta({ description: 'Unix milliseconds' }),
  finishTime: z.number().meta({ description: 'Unix milliseconds' }),
});

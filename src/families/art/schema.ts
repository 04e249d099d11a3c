/**
 * The art routes' declared contract (spec 2.7, 3.5, 4.14): the four submit bodies as the rules
 * read them (request.ts: same fields, same order, same words) and the answers. What depends on
 * another field (CHANGE's `index` against its `action`) or on the store (the task CHANGE works
 * on) stays with the rules and the route.
 */
import { z } from 'zod';
import { isImageDataUri } from '../kit/fields.js';
import { boundedString, callbackUrl, int, jsonBody, oneOf, requiredOneOf } from '../kit/schema.js';
import {
  ART_PROMPT_MAX,
  ART_STATE_MAX,
  BLEND_MAX_IMAGES,
  BLEND_MIN_IMAGES,
  CHANGE_ACTIONS,
  DATA_URI_HINT,
  DIMENSIONS,
  GRID_SIZE,
  IMAGINE_MAX_IMAGES,
  TASK_ID_MAX,
  TASK_ID_PATTERN,
  type ArtSubmit,
} from './request.js';

const absent = (input: unknown) => input === undefined || input === null;

/** A string the field cannot do without: `required` when missing (or null), as the rules word it. */
const requiredString = (required: string, wrongType = 'must be a string') => z.string({ error: (issue) => (absent(issue.input) ? required : wrongType) });

/** A list of data URI images (readImages); with `required` the list must be given, and that is the word when it is not. */
function images(min: number, max: number, required?: string) {
  const message = `must be an array of ${min} to ${max} images, each ${DATA_URI_HINT}`;
  const list = z
    .array(z.unknown(), { error: (issue) => (required !== undefined && absent(issue.input) ? required : message) })
    .min(min, message)
    .max(max, message)
    .superRefine((items, ctx) => {
      const bad = items.findIndex((item) => typeof item !== 'string' || !isImageDataUri(item));
      if (bad >= 0) ctx.addIssue({ code: 'custom', message: `item ${bad} must be ${DATA_URI_HINT}` });
    })
    .meta({ items: { type: 'string' }, description: `${min} to ${max} images, each ${DATA_URI_HINT}` });
  return required === undefined ? list.nullish() : list;
}

/** What every submit reads after its own fields. */
const common = {
  notifyHook: callbackUrl(),
  state: boundedString({ minLength: 0, maxLength: ART_STATE_MAX }).meta({ description: 'returned as given in the task record' }),
};

const ImagineBody = jsonBody({
  prompt: requiredString('required, what to imagine')
    .refine((text) => text.trim() !== '', 'must not be empty')
    .max(ART_PROMPT_MAX, `must be at most ${ART_PROMPT_MAX} characters`)
    .meta({ description: 'what to imagine' }),
  base64Array: images(1, IMAGINE_MAX_IMAGES),
  ...common,
});

const DescribeBody = jsonBody({
  base64: requiredString(`required, the image to describe as ${DATA_URI_HINT}`, `must be ${DATA_URI_HINT}`)
    .refine(isImageDataUri, `must be ${DATA_URI_HINT}`)
    .meta({ description: `the image to describe, ${DATA_URI_HINT}` }),
  ...common,
});

const BlendBody = jsonBody({
  base64Array: images(BLEND_MIN_IMAGES, BLEND_MAX_IMAGES, `required, ${BLEND_MIN_IMAGES} to ${BLEND_MAX_IMAGES} images to blend`),
  dimensions: oneOf(DIMENSIONS).meta({ description: 'default SQUARE' }),
  ...common,
});

const taskIdSyntax = `must be a task id (letters, digits, _ and -, at most ${TASK_ID_MAX})`;

const ChangeBody = jsonBody({
  taskId: requiredString('required, the id of the finished task to change', taskIdSyntax)
    .regex(TASK_ID_PATTERN, taskIdSyntax)
    .meta({ description: 'the finished IMAGINE, BLEND, VARIATION or REROLL task of this account to change' }),
  action: requiredOneOf(CHANGE_ACTIONS, `required, one of ${CHANGE_ACTIONS.join(', ')}`),
  index: int(1, GRID_SIZE).meta({ description: `which image of the grid, 1 to ${GRID_SIZE}: required for UPSCALE and VARIATION, not taken by REROLL` }),
  ...common,
});

export const ART_BODIES: Readonly<Record<ArtSubmit, typeof ImagineBody | typeof DescribeBody | typeof BlendBody | typeof ChangeBody>> = {
  imagine: ImagineBody,
  describe: DescribeBody,
  blend: BlendBody,
  change: ChangeBody,
};

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

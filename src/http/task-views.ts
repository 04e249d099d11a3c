/** The task view reader lives in the engine (it signs asset URLs); routes import it from here too. */
export { taskViewFor } from '../engine/tasks/task-view.js';

/** The clock's now in whole epoch seconds (the unit of `completedAt`, `created_at` and token expiries). */
export const nowSeconds = (clock: () => Date): number => Math.floor(clock().getTime() / 1000);

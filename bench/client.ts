/** Setting up a gateway for a benchmark over plain HTTP: admin login, a funded user, a key. */
export async function fundedKey(url: string, adminPassword: string, credit: number): Promise<string> {
  const json = { 'content-type': 'application/json' };
  const login = await fetch(`${url}/api/user/login`, { method: 'POST', headers: json, body: JSON.stringify({ username: 'admin', password: adminPassword }) });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const adminId = ((await login.json()) as { data: { id: string } }).data.id;
  const session = { ...json, cookie };
  await fetch(`${url}/api/admin/credits`, { method: 'POST', headers: session, body: JSON.stringify({ user_id: adminId, amount: credit }) });
  const token = await fetch(`${url}/api/token/`, { method: 'POST', headers: session, body: JSON.stringify({ name: 'bench', unlimited_quota: true }) });
  return ((await token.json()) as { data: { key: string } }).data.key;
}

export async function adminCookie(url: string, adminPassword: string): Promise<string> {
  const login = await fetch(`${url}/api/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: adminPassword }),
  });
  return (login.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** Runs `count` async jobs with at most `concurrency` at once. */
export async function pool<T>(count: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

import { session } from '../session.ts';
import { UsageSummary } from '../manage/usage-summary.tsx';

/** The first page after sign-in. */
export function Overview() {
  const me = session.value!;
  return (
    <section>
      <h1>{me.organization.name}</h1>
      <p class="muted">Signed in as {me.user?.email ?? 'an API key'}.</p>
      <UsageSummary />
    </section>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { MembersQuery, OrganizationPageQuery } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { session } from '../session.ts';
import { FieldError, fieldProps, FormError, formatNumber, problemOf, When, type Problem } from '../ui.tsx';

const OrganizationPageDocument = graphql(`
  query OrganizationPage {
    me {
      role
      organization {
        id
        name
        monthlyQueryLimit
        storedTokenLimit
        crawlPageLimit
        usage {
          period
          queriesThisMonth
          storedTokens
        }
      }
    }
  }
`);

const MembersDocument = graphql(`
  query Members($after: String) {
    members(first: 50, after: $after) {
      nodes {
        id
        email
        role
        joinedAt
      }
      pageInfo {
        endCursor
        hasNextPage
      }
    }
  }
`);

const RenameOrganizationDocument = graphql(`
  mutation RenameOrganization($name: String!) {
    updateOrganization(name: $name) {
      id
      name
    }
  }
`);

function loadMembers(after: string | null) {
  return request(MembersDocument, { after }).then((r) => r.members);
}

/** `/organization`: its name, its members, its plan limits with what is used of them. */
export function OrganizationPage() {
  const [data, setData] = useState<OrganizationPageQuery | null>(null);
  const [members, setMembers] = useState<MembersQuery['members']['nodes']>([]);
  const [more, setMore] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    request(OrganizationPageDocument).then(setData, (err) => setProblem(problemOf(err)));
    loadMembers(null).then(
      (page) => {
        setMembers(page.nodes);
        setMore(page.pageInfo.hasNextPage ? page.pageInfo.endCursor ?? null : null);
      },
      (err) => setProblem(problemOf(err)),
    );
  }, []);

  async function showMore() {
    if (!more) return;
    const page = await loadMembers(more);
    setMembers((list) => [...list, ...page.nodes]);
    setMore(page.pageInfo.hasNextPage ? page.pageInfo.endCursor ?? null : null);
  }

  async function rename(event: SubmitEvent) {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name'));
    setBusy(true);
    setProblem(null);
    setSaved(false);
    try {
      const { updateOrganization } = await request(RenameOrganizationDocument, { name });
      setData((d) => d && { ...d, me: { ...d.me, organization: { ...d.me.organization, name: updateOrganization.name } } });
      const me = session.value;
      if (me) session.value = { ...me, organization: { ...me.organization, name: updateOrganization.name } };
      setSaved(true);
    } catch (err) {
      setProblem(problemOf(err));
    } finally {
      setBusy(false);
    }
  }

  if (!data) {
    return (
      <section aria-busy={!problem}>
        <h1>Organization</h1>
        <FormError problem={problem} fields={[]} />
      </section>
    );
  }
  const { organization, role } = data.me;
  const canRename = role === 'owner' || role === 'admin';
  const { usage } = organization;

  return (
    <>
      <section>
        <h1>Organization</h1>
        {canRename ? (
          <form onSubmit={rename}>
            <label>
              Name
              <input {...fieldProps(problem, 'name')} type="text" required maxLength={200} defaultValue={organization.name} />
              <FieldError problem={problem} field="name" />
            </label>
            <FormError problem={problem} fields={['name']} />
            <div class="actions">
              <button type="submit" aria-busy={busy} disabled={busy}>
                Save name
              </button>
              <span role="status" class="muted">
                {saved ? 'Saved.' : ''}
              </span>
            </div>
          </form>
        ) : (
          <p>
            Name: <strong>{organization.name}</strong>
          </p>
        )}
      </section>

      <section>
        <h2>Plan limits and usage</h2>
        <div class="scroll">
          <table class="usage">
            <thead>
              <tr>
                <th scope="col">Limit</th>
                <th scope="col">Used</th>
                <th scope="col">Allowed</th>
                <th scope="col">Share</th>
              </tr>
            </thead>
            <tbody>
              <UsageRow label={`Queries this month${usage ? ` (${usage.period})` : ''}`} used={usage?.queriesThisMonth} limit={organization.monthlyQueryLimit} />
              <UsageRow label="Stored tokens" used={usage?.storedTokens} limit={organization.storedTokenLimit} />
              <tr>
                <th scope="row">Pages per crawled web site</th>
                <td class="muted">—</td>
                <td>{formatNumber(organization.crawlPageLimit)}</td>
                <td />
              </tr>
            </tbody>
          </table>
        </div>
      </section>

      <section>
        <h2>Members</h2>
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.id}>
                  <td>{m.email}</td>
                  <td>{m.role}</td>
                  <td>
                    <When at={m.joinedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {more && (
          <button type="button" class="secondary" onClick={() => void showMore()}>
            Show more members
          </button>
        )}
      </section>
    </>
  );
}

/** A limit, what is used of it, and the share as a bar (usage is null only to non-members). */
export function UsageRow({ label, used, limit }: { label: string; used: number | undefined; limit: number }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{used === undefined ? <span class="muted">—</span> : formatNumber(used)}</td>
      <td>{formatNumber(limit)}</td>
      <td>{used !== undefined && <progress value={Math.min(used, limit)} max={limit} aria-label={`${label}: ${formatNumber(used)} of ${formatNumber(limit)}`} />}</td>
    </tr>
  );
}

import { useEffect, useState } from 'preact/hooks';
import { graphql } from '../gql/index.ts';
import type { UsageSummaryQuery } from '../gql/graphql.ts';
import { request } from '../graphql.ts';
import { formatNumber } from '../ui.tsx';

const UsageSummaryDocument = graphql(`
  query UsageSummary {
    me {
      organization {
        monthlyQueryLimit
        storedTokenLimit
        usage {
          queriesThisMonth
          storedTokens
        }
      }
    }
  }
`);

/** The overview's one line of usage; the organization page has the details. */
export function UsageSummary() {
  const [data, setData] = useState<UsageSummaryQuery | null>(null);
  useEffect(() => {
    request(UsageSummaryDocument).then(setData, () => setData(null));
  }, []);
  const o = data?.me.organization;
  if (!o?.usage) return null;
  return (
    <p>
      {formatNumber(o.usage.queriesThisMonth)} of {formatNumber(o.monthlyQueryLimit)} queries this month · {formatNumber(o.usage.storedTokens)} of{' '}
      {formatNumber(o.storedTokenLimit)} tokens stored · <a href="#/organization">Limits and members</a>
    </p>
  );
}

/** Nuxeo's permission model, reduced to what the sandbox enforces. */
export interface Ace {
  username: string;
  permission: string;
  granted: boolean;
  creator: string | null;
  begin: string | null;
  end: string | null;
}

export interface Acl {
  name: string;
  aces: Ace[];
}

const READ = [
  'Browse',
  'ReadVersion',
  'ReadProperties',
  'ReadChildren',
  'ReadLifeCycle',
  'ReadSecurity',
  'ReviewParticipant',
];
const WRITE = ['AddChildren', 'WriteProperties', 'Remove', 'ManageWorkflows', 'WriteLifeCycle', 'WriteVersion'];

/**
 * What each named permission includes: permissions-contrib.xml (nuxeo-core), collection-security-contrib.xml
 * (nuxeo-collections) and document-routing-security-contrib.xml (nuxeo-routing-core), 2021 and 2023.
 */
const GROUPS: Record<string, string[]> = {
  Read: READ,
  Write: WRITE,
  ReadWrite: [...READ, ...WRITE],
  ReadRemove: [...READ, 'Remove'],
  ReadCanCollect: [...READ, 'WriteProperties'],
  DataVisualization: READ,
  Everything: [...READ, ...WRITE, 'WriteSecurity', 'RemoveChildren'],
};

export const KNOWN_PERMISSIONS = new Set([...Object.keys(GROUPS), ...Object.values(GROUPS).flat()]);

const expand = (permission: string): string[] => GROUPS[permission] ?? [permission];

/** A granted permission covers the required one when it includes all that the required one means. */
function includes(granted: string, required: string): boolean {
  const have = expand(granted);
  return granted === required || expand(required).every((p) => have.includes(p));
}

export const EVERYONE = 'Everyone';

export function isBlock(ace: Ace): boolean {
  return !ace.granted && ace.username === EVERYONE && ace.permission === 'Everything';
}

export function aceId(ace: Ace): string {
  const millis = (date: string | null): string => (date === null ? '' : String(Date.parse(date)));
  return `${ace.username}:${ace.permission}:${ace.granted}:${ace.creator ?? ''}:${millis(ace.begin)}:${millis(ace.end)}`;
}

function effective(ace: Ace, now: number): boolean {
  return (ace.begin === null || Date.parse(ace.begin) <= now) && (ace.end === null || Date.parse(ace.end) > now);
}

export function aceStatus(ace: Ace, now = Date.now()): 'pending' | 'effective' | 'archived' {
  if (ace.begin !== null && Date.parse(ace.begin) > now) return 'pending';
  if (ace.end !== null && Date.parse(ace.end) <= now) return 'archived';
  return 'effective';
}

/**
 * First matching ACE wins, walking the document's ACLs and then its ancestors' (nearest first).
 * `chain` is the list of ACL lists from the document up to the root.
 */
export function checkPermission(chain: Acl[][], principals: ReadonlySet<string>, required: string): boolean {
  const now = Date.now();
  for (const acls of chain) {
    for (const acl of acls) {
      for (const ace of acl.aces) {
        if (!principals.has(ace.username) || !includes(ace.permission, required) || !effective(ace, now)) continue;
        return ace.granted;
      }
    }
  }
  return false;
}

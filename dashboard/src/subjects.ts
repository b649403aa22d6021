import { useEffect, useState } from 'preact/hooks';
import { call, projectPath, type Collection, type User } from './api';

/**
 * What the simulator and the Live screen pick from: the project's collections (the first one
 * chosen until the person picks another) and up to 100 of its users (none while Auth is off, so
 * only anonymous or hand-written users can be chosen). A failure to list collections goes to
 * `onError`.
 */
export function useSubjects(key: string | null, project: string, onError: (err: unknown) => void) {
  const [collections, setCollections] = useState<Collection[]>([]);
  const [users, setUsers] = useState<User[]>([]);
  const [collection, setCollection] = useState('');
  useEffect(() => {
    if (!key) return;
    call<{ collections: Collection[] }>(key, 'GET', projectPath(project, '/collections')).then((r) => {
      setCollections(r.collections);
      setCollection((c) => c || (r.collections[0]?.name ?? ''));
    }, onError);
    call<{ users: User[] }>(key, 'GET', projectPath(project, '/auth/users?limit=100')).then((r) => setUsers(r.users), () => setUsers([]));
  }, [key]);
  return { collections, users, collection, setCollection };
}

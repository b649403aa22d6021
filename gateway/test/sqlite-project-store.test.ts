import { SqliteProjectStore } from '../src/store/sqlite-project-store';
import { describeProjectStoreContract } from './project-store.contract';

describeProjectStoreContract('sqlite', async () => new SqliteProjectStore(':memory:'));

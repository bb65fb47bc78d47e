-- The schema of a signupd v1 database ("v1: accounts and tokens", keys were lowercased()
-- bytes), exactly as GRDB wrote it, frozen here for LegacyMigrationTests. Migrations are
-- never edited, so this stays what a v1 daemon left on disk. Never change it.
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
INSERT INTO grdb_migrations (identifier) VALUES ('v1: accounts and tokens');
CREATE TABLE "account" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "username" TEXT NOT NULL, "usernameKey" TEXT NOT NULL UNIQUE, "passwordHash" TEXT NOT NULL, "createdAt" INTEGER NOT NULL);
CREATE TABLE "token" ("hash" BLOB PRIMARY KEY NOT NULL, "accountId" INTEGER NOT NULL REFERENCES "account"("id") ON DELETE CASCADE, "expiresAt" INTEGER NOT NULL);
CREATE INDEX "token_on_accountId" ON "token"("accountId");
CREATE INDEX "token_on_expiresAt" ON "token"("expiresAt");

import { queryPage } from "../aws/ddb.ts";

// OAuth tokens obtained through the auth service, per workspace and provider (stored encrypted).
export const tokenPk = (tenantId: string) => `T#${tenantId}#OAUTHTOKEN`;

export async function hasToken(tenantId: string, providerId: string): Promise<boolean> {
  const page = await queryPage("main", {
    KeyConditionExpression: "PK = :pk AND begins_with(SK, :sk)",
    values: { ":pk": tokenPk(tenantId), ":sk": `${providerId}#` },
    Limit: 1,
    ProjectionExpression: "PK",
  });
  return page.items.length > 0;
}

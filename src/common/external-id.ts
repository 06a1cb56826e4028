/** An external id (CONTRACT §3): what a backend names its users and channels by, and a JWT's `sub`. */
export const EXTERNAL_ID_PATTERN = /^[^\s/\\?#%]{1,128}$/u;
export const EXTERNAL_ID_RULE = 'must be 1-128 characters without spaces, slashes, ?, # or %';

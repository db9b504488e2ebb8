/** A Lambda invocation's failure, as its caller sees it: the error's name is Lambda's errorType. */
export class FunctionError extends Error {
  constructor(errorType: string, errorMessage: string) {
    super(errorMessage);
    this.name = errorType;
  }
}

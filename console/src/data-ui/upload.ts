/**
 * One file to a datastore with upload progress: fetch() cannot report the bytes sent, XMLHttpRequest's
 * `upload` events can. It posts to the datastore's `uploadPath` (the REST multipart row, on this
 * origin, with the session cookie), so no link has to be fetched first and nothing leaves the origin.
 */
export interface Uploaded {
  id: string;
}

export function uploadFile(path: string, file: File, onProgress: (sent: number, total: number) => void): Promise<Uploaded> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.responseType = 'json';
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    };
    xhr.onload = () => {
      const body = xhr.response as { id?: string; error?: { message?: string } } | null;
      if (xhr.status >= 200 && xhr.status < 300 && body?.id) resolve({ id: body.id });
      else reject(new Error(body?.error?.message ?? `The upload failed (${xhr.status}).`));
    };
    xhr.onerror = () => reject(new Error('The service cannot be reached.'));
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

# Reference GE2E embeddings for native/speaker/harness.cpp: librosa mel (resemblyzer's audio.py)
# and a float64 numpy LSTM with the weights of pretrained.pt ($PT) read by pickle, no torch.
# Usage: PT=.../pretrained.pt python reference.py <out.ref> <16 kHz 16-bit mono wav>
# Output: int32 samples, partials, mel frames; float32 audio; int32 starts; float32 mel; float32 embeddings.
import os, pickle, collections, struct, sys, numpy as np, librosa, soundfile
PT=os.environ.get('PT', 'pretrained.pt')
def load():
    f=open(PT,'rb')
    for _ in range(3): pickle.load(f)
    class U(pickle.Unpickler):
        def find_class(s, mod, name):
            if name=='_rebuild_tensor_v2': return lambda st,off,size,stride,*a: ('T',st,off,size,stride)
            if name=='OrderedDict': return collections.OrderedDict
            return lambda *a: name
        def persistent_load(s,pid): return pid[2]
    obj=U(f).load(); keys=pickle.load(f)
    data={}
    for k in keys:
        n,=struct.unpack('<q',f.read(8)); data[k]=np.frombuffer(f.read(4*n),dtype='<f4')
    W={}
    for name,(_,st,off,size,stride) in obj['model_state'].items():
        W[name]=data[st][off:off+int(np.prod(size))].reshape(size).astype(np.float64)
    return W
W=load()
def sig(x): return 1/(1+np.exp(-x))
def forward(mels):  # (B,T,40)
    x=mels.astype(np.float64)
    for l in range(3):
        Wih,Whh=W[f'lstm.weight_ih_l{l}'],W[f'lstm.weight_hh_l{l}']; b=W[f'lstm.bias_ih_l{l}']+W[f'lstm.bias_hh_l{l}']
        B,T,_=x.shape; h=np.zeros((B,256)); c=np.zeros((B,256)); out=np.zeros((B,T,256))
        xp=x@Wih.T+b
        for t in range(T):
            g=xp[:,t]+h@Whh.T
            i,f,gg,o=sig(g[:,:256]),sig(g[:,256:512]),np.tanh(g[:,512:768]),sig(g[:,768:])
            c=f*c+i*gg; h=o*np.tanh(c); out[:,t]=h
        x=out
    e=np.maximum(h@W['linear.weight'].T+W['linear.bias'],0)
    return e/np.linalg.norm(e,axis=1,keepdims=True)
def normalize_volume(wav, target=-30):
    rms=np.sqrt(np.mean((wav*32767)**2)); d=target-20*np.log10(rms/32767)
    return wav if d<0 else wav*(10**(d/20))
if __name__=='__main__':
    out=sys.argv[1]
    wav,sr=soundfile.read(sys.argv[2],dtype='float32'); assert sr==16000
    wav=wav.astype(np.float32)
    norm=normalize_volume(wav).astype(np.float32)
    mel=librosa.feature.melspectrogram(y=norm,sr=16000,n_fft=400,hop_length=160,n_mels=40).astype(np.float32).T
    starts=[0,37,80] ; starts=[s for s in starts if s+160<=len(mel)]
    mels=np.stack([mel[s:s+160] for s in starts])
    emb=forward(mels).astype(np.float32)
    with open(out,'wb') as f:
        f.write(struct.pack('<iii',len(wav),len(starts),mel.shape[0])); f.write(wav.tobytes())
        f.write(np.array(starts,dtype='<i4').tobytes()); f.write(mel.tobytes()); f.write(emb.tobytes())
    print('mel frames',mel.shape,'starts',starts,'emb[0][:5]',emb[0][:5], 'cos01', emb[0]@emb[1])
